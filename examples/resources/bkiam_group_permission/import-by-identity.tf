# Terraform and OpenTofu 1.12+: adopt what group 42 holds of edit_host.
import {
  to = bkiam_group_permission.edit_web_hosts
  identity = {
    system   = "bk_cmdb"
    group_id = "42"
    actions  = ["edit_host"]
  }
}
