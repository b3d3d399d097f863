# Terraform and OpenTofu 1.12+: adopt what alice holds of view_host and
# edit_host on bk_cmdb hosts (read with detect_drift = true in the provider).
# Without actions and resource_types, the grant is adopted holding nothing
# known, as the short import ID does.
import {
  to = bkiam_instance_grant.alice_hosts
  identity = {
    system         = "bk_cmdb"
    subject_type   = "user"
    subject_id     = "alice"
    actions        = ["edit_host", "view_host"]
    resource_types = ["bk_cmdb/host"]
  }
}
