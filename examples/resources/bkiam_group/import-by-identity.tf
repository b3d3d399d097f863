# Terraform and OpenTofu 1.12+: adopt group 345 of grade manager 12.
import {
  to = bkiam_group.team["developers"]
  identity = {
    system           = "bk_cmdb"
    grade_manager_id = "12"
    id               = "345"
  }
}
