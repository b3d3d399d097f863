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

# alice's view_host rolls: a plan within a week of its expiry renews it
# for 90 days more.
resource "bkiam_instance_grant" "alice_hosts" {
  system       = "bk_cmdb"
  subject      = { type = "user", id = "alice" }
  actions      = ["view_host"]
  resources    = [{ system = "bk_cmdb", type = "host", instances = { "1" = "host1" } }]
  expires_in   = "90d"
  renew_before = "7d"
}

# What of alice's own host permissions lapses within 30 days: her
# view_host is named as renewed by "hosts", and not counted in lapsing.
data "bkiam_expiring" "alice" {
  system     = "bk_cmdb"
  user       = "alice"
  actions    = ["view_host", "edit_host"]
  within     = "30d"
  renewed_by = { hosts = bkiam_instance_grant.alice_hosts }
}

check "nobody_lapses_unnoticed" {
  assert {
    condition = data.bkiam_expiring.oncall.lapsing + data.bkiam_expiring.alice.lapsing == 0
    error_message = "Lapsing soon: ${join(", ", concat(
      [for m in data.bkiam_expiring.oncall.members : "${m.type} ${m.id} on ${m.expires_at}"],
      [for g in data.bkiam_expiring.alice.grants : "alice's ${g.action} on ${g.expires_at}" if g.renewed_by == null],
    ))}."
  }
}

output "alice_lapsing" {
  value = data.bkiam_expiring.alice.grants
}
