# Adopt Dave's memberships in groups 42 and 43: SYSTEM/user/USERNAME/GROUP_IDS
# (or SYSTEM/department/DEPARTMENT_ID/GROUP_IDS). The resource holds only the
# groups it lists, so the import names them; it reads each expiry from IAM.
terraform import bkiam_user_groups.dave bk_cmdb/user/dave/42,43
