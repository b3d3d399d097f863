# terraform query (Terraform 1.14+): the grade managers bk_cmdb created
# through the management API whose name contains "platform".
list "bkiam_grade_manager" "platform" {
  provider = bkiam
  config {
    system = "bk_cmdb"
    name   = "platform"
  }
}
