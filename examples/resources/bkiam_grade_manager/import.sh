# Adopt a grade manager the system created through the management API:
# SYSTEM/GRADE_MANAGER_ID. IAM cannot read back its scopes or its sync
# group's name. A configuration that leaves authorization_scopes and
# subject_scopes out (as terraform query generates it) leaves IAM's as
# they are and plans no change; before changing the grade manager, write
# both as they are in IAM, since every update sends them whole.
terraform import bkiam_grade_manager.platform bk_cmdb/12
