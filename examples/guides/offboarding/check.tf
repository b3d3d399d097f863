# Beside the action (action.tf): after
#   terraform apply -invoke=action.bkiam_user_cleanup.leaver
# a plan or apply of the configuration reads what alice still holds and
# warns until IAM has carried the cleanup out.
data "bkiam_user_access" "alice" {
  system  = "bk_cmdb"
  user    = "alice"
  actions = ["view_host", "edit_host"]
}

check "alice_cleaned_up" {
  assert {
    condition = data.bkiam_user_access.alice.holds_nothing
    error_message = "alice still holds: ${join(", ", concat(
      [for id, g in data.bkiam_user_access.alice.groups : "group ${g.name} (${id})" if g.direct],
      [for action, p in data.bkiam_user_access.alice.policies : "${action} until ${p.expires_at}"],
    ))}"
  }
}

# Groups alice reaches only through a department: IAM's cleanup keeps
# them, and holds_nothing leaves them out.
output "alice_department_only_groups" {
  value = data.bkiam_user_access.alice.department_only_groups
}
