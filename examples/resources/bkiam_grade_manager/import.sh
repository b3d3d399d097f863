# Adopt a grade manager the system created through the management API:
# SYSTEM/GRADE_MANAGER_ID. IAM cannot read back its scopes or its sync
# group's name: the next apply sends those from the configuration.
terraform import bkiam_grade_manager.platform bk_cmdb/12
