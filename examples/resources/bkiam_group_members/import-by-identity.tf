# Terraform and OpenTofu 1.12+: adopt the members of group 42.
import {
  to = bkiam_group_members.developers
  identity = {
    system   = "bk_cmdb"
    group_id = "42"
  }
}
