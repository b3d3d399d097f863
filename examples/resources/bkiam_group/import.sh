# Adopt a grade manager's group: SYSTEM/GRADE_MANAGER_ID/GROUP_ID. (A system
# manager's group, under "-", cannot be read back, and so not imported.)
terraform import 'bkiam_group.team["developers"]' bk_cmdb/12/345
