# Adopt what a group holds of some actions: SYSTEM/GROUP_ID/ACTION[,ACTION…].
# The import reads the instances from IAM; the actions must hold the same ones.
terraform import bkiam_group_permission.edit_web_hosts bk_cmdb/42/edit_host
