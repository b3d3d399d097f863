# Integration tests of the module against IAM: the provider is the real one,
# configured through the environment (BKIAM_APIGW_URL, BKIAM_APP_CODE,
# BKIAM_APP_SECRET), e.g. the IAM sandbox of this repository. After `terraform
# init` (which installs tests/access), `terraform test` (or `tofu test`) applies,
# asserts, and destroys what it applied.

variables {
  members   = ["alice", "bob"]
  actions   = ["view_host", "edit_host"]
  instances = { "1" = "host1", "2" = "host2" }
}

run "grants_every_member" {
  command = apply

  assert {
    condition     = length(output.policies) == 2
    error_message = "Each member must hold a grant."
  }
  assert {
    condition     = alltrue([for user, p in output.policies : p["view_host"] > 0 && p["edit_host"] > 0])
    error_message = "IAM must return a policy ID for every member and action."
  }
}

run "a_member_leaves" {
  command = apply

  variables {
    members = ["alice"]
  }

  assert {
    condition     = keys(output.policies) == ["alice"]
    error_message = "Only the remaining member keeps a grant."
  }
}

# What IAM answers after the last run: alice, still a member, may do the
# actions; bob, who left, no longer may; carol never could.
run "iam_agrees" {
  module {
    source = "./tests/access"
  }

  variables {
    members = ["alice"]
    users   = ["alice", "bob", "carol"]
  }

  assert {
    condition     = output.allowed == { alice = true, bob = false, carol = false }
    error_message = "IAM must allow exactly the remaining member: ${jsonencode(output.allowed)}."
  }
}
