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

# Sites grant mostly by topology: "every host under business 3", as IAM's
# web UI and CMDB grant it. IAM allows a host through such a grant only
# when the check gives the host's path (its ancestors, "/biz,3/"): give
# each resource its paths. Without them, an action such a grant would
# allow is conditional: allowed is null for it and the plan warns.
data "bkiam_access_check" "carol_edits_host_30" {
  system  = "bk_cmdb"
  subject = { type = "user", id = "carol" }
  actions = ["edit_host"]
  resources = [{
    system = "bk_cmdb"
    type   = "host"
    id     = "30"
    paths  = ["/biz,3/"]
  }]
}

check "carol_does_not_edit_host_30" {
  assert {
    # "== false", not "!": a conditional (null) answer then fails the
    # check too, rather than failing the plan with a null error.
    condition     = data.bkiam_access_check.carol_edits_host_30.all_allowed == false
    error_message = "carol may edit host 30, or IAM's answer depends on what the check does not give (conditional: ${join(", ", data.bkiam_access_check.carol_edits_host_30.conditional)})."
  }
}
