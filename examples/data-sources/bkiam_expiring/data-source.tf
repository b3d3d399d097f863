# Who leaves the on-call group within two weeks, for a check block that
# warns in every plan before anyone loses access.
data "bkiam_grade_manager" "platform" {
  system = "bk_cmdb"
  name   = "platform"
}

data "bkiam_group" "oncall" {
  system           = "bk_cmdb"
  grade_manager_id = data.bkiam_grade_manager.platform.id
  name             = "oncall"
}

data "bkiam_expiring" "oncall" {
  system   = "bk_cmdb"
  group_id = data.bkiam_group.oncall.id
  within   = "14d"
}

# What of alice's own host permissions lapses within 30 days.
data "bkiam_expiring" "alice" {
  system  = "bk_cmdb"
  user    = "alice"
  actions = ["view_host", "edit_host"]
  within  = "30d"
}

check "nobody_lapses_unnoticed" {
  assert {
    condition = data.bkiam_expiring.oncall.lapsing + data.bkiam_expiring.alice.lapsing == 0
    error_message = "Lapsing soon: ${join(", ", concat(
      [for m in data.bkiam_expiring.oncall.members : "${m.type} ${m.id} on ${m.expires_at}"],
      [for g in data.bkiam_expiring.alice.grants : "alice's ${g.action} on ${g.expires_at}"],
    ))}."
  }
}

output "alice_lapsing" {
  value = data.bkiam_expiring.alice.grants
}
