# Terraform and OpenTofu 1.12+: adopt Dave's memberships in groups 42 and 43.
import {
  to = bkiam_user_groups.dave
  identity = {
    system      = "bk_cmdb"
    member_type = "user"
    member_id   = "dave"
    groups      = ["42", "43"]
  }
}
