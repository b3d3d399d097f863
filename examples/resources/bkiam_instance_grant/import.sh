# Adopt the grants a subject already holds in a system: SYSTEM/SUBJECT_TYPE/SUBJECT_ID.
# The next apply grants what the configuration declares; IAM treats what it
# already holds as a no-op.
terraform import bkiam_instance_grant.alice_hosts bk_cmdb/user/alice

# With detect_drift = true in the provider: read what alice holds of view_host
# and edit_host on bk_cmdb hosts, and record exactly that.
terraform import bkiam_instance_grant.alice_hosts bk_cmdb/user/alice/view_host,edit_host/bk_cmdb/host

# A combined resource: its resource types in the order of resources.
terraform import bkiam_instance_grant.alice_biz_hosts bk_cmdb/user/alice/edit_biz_host/bk_cmdb/biz/bk_cmdb/host

# Actions related to no resource type: no types after the actions.
terraform import bkiam_instance_grant.carol_create bk_cmdb/user/carol/create_biz
