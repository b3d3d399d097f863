# After a leaver's cleanup: dave must be in no group himself and hold no
# policy of his own of these actions. Groups he reaches through a
# department stay (IAM's cleanup keeps them) and are reported apart.
data "bkiam_user_access" "dave" {
  system  = "bk_cmdb"
  user    = "dave"
  actions = ["view_host", "edit_host"]
}

check "dave_cleaned_up" {
  assert {
    condition = data.bkiam_user_access.dave.holds_nothing
    error_message = "dave still holds: ${join(", ", concat(
      [for id, g in data.bkiam_user_access.dave.groups : "group ${g.name} (${id})" if g.direct],
      [for action, p in data.bkiam_user_access.dave.policies : "${action} until ${p.expires_at}"],
    ))}"
  }
}

# Every group alice is in, and how.
output "alice_groups" {
  value = {
    for id, g in data.bkiam_user_access.alice.groups :
    g.name => g.direct ? "member until ${coalesce(g.expires_at, "(not told)")}" : (g.expired ? "expired" : "through a department")
  }
}

data "bkiam_user_access" "alice" {
  system = "bk_cmdb"
  user   = "alice"
}
