# terraform query (Terraform 1.14+): every user's grant of view_host.
list "bkiam_instance_grant" "view_host" {
  provider = bkiam
  config {
    system       = "bk_cmdb"
    action       = "view_host"
    subject_type = "user"
  }
}
