# Assert the outcome, not only the inputs: after this configuration, alice
# may view host 1 (however she holds it: her own grant, a group, her
# department's group), and bob may not delete it.
resource "bkiam_instance_grant" "alice" {
  system  = "bk_cmdb"
  subject = { type = "user", id = "alice" }
  actions = ["view_host"]
  resources = [{
    system    = "bk_cmdb"
    type      = "host"
    instances = { "1" = "host1" }
  }]
}

# Read after the grant is applied, and fail the apply if IAM does not
# then allow it.
data "bkiam_access_check" "alice_views_host_1" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "alice" }
  actions   = ["view_host"]
  resources = [{ system = "bk_cmdb", type = "host", id = "1" }]

  depends_on = [bkiam_instance_grant.alice]

  lifecycle {
    postcondition {
      condition     = self.all_allowed
      error_message = "IAM does not let alice view host 1 after the grant."
    }
  }
}

# A check block warns in every plan, and fails nothing.
data "bkiam_access_check" "bob_deletes_host_1" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "bob" }
  actions   = ["delete_host"]
  resources = [{ system = "bk_cmdb", type = "host", id = "1" }]
}

check "bob_does_not_delete_host_1" {
  assert {
    condition     = !data.bkiam_access_check.bob_deletes_host_1.all_allowed
    error_message = "bob may delete host 1${data.bkiam_access_check.bob_deletes_host_1.as_manager ? " (as a manager of bk_cmdb)" : ""}."
  }
}
