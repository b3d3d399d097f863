# Unit tests of the module with a mocked provider: no IAM, no credentials.
# Run `terraform init` first (it installs the helper module tests/access,
# without which every test stops with "Module not installed"), then
# `terraform test -filter=tests/mock.tftest.hcl` (Terraform 1.7 or later) or
# `tofu test -filter=tests/mock.tftest.hcl` (OpenTofu 1.8 or later).

mock_provider "bkiam" {
  mock_resource "bkiam_instance_grant" {
    defaults = {
      id       = "mocked"
      policies = { view_host = 7 }
    }
  }
}

variables {
  members   = ["alice", "bob"]
  actions   = ["view_host"]
  instances = { "1" = "host1", "2" = "host2" }
}

run "one_grant_per_member" {
  command = plan

  assert {
    condition     = length(bkiam_instance_grant.member) == 2
    error_message = "Each member must get a grant of their own."
  }
  assert {
    condition     = bkiam_instance_grant.member["alice"].subject.type == "user" && bkiam_instance_grant.member["alice"].subject.id == "alice"
    error_message = "A member's grant must name the member as a user."
  }
  assert {
    condition     = bkiam_instance_grant.member["bob"].resources[0].instances == tomap({ "1" = "host1", "2" = "host2" })
    error_message = "Every member must get the team's instances."
  }
}

run "outputs_by_member" {
  command = apply

  assert {
    condition     = output.policies["alice"]["view_host"] == 7
    error_message = "policies must map each member to their policy IDs."
  }
}

run "repeated_member_refused" {
  command = plan

  variables {
    members = ["alice", "alice"]
  }
  expect_failures = [var.members]
}
