# Adopt the grants a subject already holds in a system: SYSTEM/SUBJECT_TYPE/SUBJECT_ID.
# The next apply grants what the configuration declares; IAM treats what it
# already holds as a no-op.
terraform import bkiam_instance_grant.alice_hosts bk_cmdb/user/alice
