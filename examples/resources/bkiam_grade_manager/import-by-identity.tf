# Terraform and OpenTofu 1.12+: adopt grade manager 12 of bk_cmdb.
import {
  to = bkiam_grade_manager.platform
  identity = {
    system = "bk_cmdb"
    id     = "12"
  }
}
