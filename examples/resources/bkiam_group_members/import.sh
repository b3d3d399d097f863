# Adopt the members of an existing group: SYSTEM/GROUP_ID. The import reads
# the group's users and departments, with their expiries, from IAM.
terraform import bkiam_group_members.developers bk_cmdb/42
