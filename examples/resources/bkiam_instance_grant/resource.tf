# Alice may view and edit two hosts, permanently.
resource "bkiam_instance_grant" "alice_hosts" {
  system  = "bk_cmdb"
  subject = { type = "user", id = "alice" }
  actions = ["view_host", "edit_host"]
  resources = [{
    system    = "bk_cmdb"
    type      = "host"
    instances = { "1" = "host1", "2" = "host2" }
  }]
}

# A contractor's access that ends on its own.
resource "bkiam_instance_grant" "contractor" {
  system  = "bk_cmdb"
  subject = { type = "user", id = "bob" }
  actions = ["view_host"]
  resources = [{
    system    = "bk_cmdb"
    type      = "host"
    instances = { "1" = "host1" }
  }]
  expires_at = "2027-06-30T00:00:00Z"
}

# An on-call engineer's access for 90 days, renewed by the plans made in
# its last week: each renewal moves expires_at on by 90 days.
resource "bkiam_instance_grant" "oncall" {
  system  = "bk_cmdb"
  subject = { type = "user", id = "carol" }
  actions = ["view_host"]
  resources = [{
    system    = "bk_cmdb"
    type      = "host"
    instances = { "2" = "host2" }
  }]
  expires_in   = "90d"
  renew_before = "7d"
}

# A user group (numeric ID): everyone in it may view the hosts.
resource "bkiam_instance_grant" "ops_group" {
  system  = "bk_cmdb"
  subject = { type = "group", id = "1" }
  actions = ["view_host"]
  resources = [{
    system    = "bk_cmdb"
    type      = "host"
    instances = { for id, host in var.hosts : id => host.name }
  }]
}

# A combined resource: edit_biz_host relates to a business and a host,
# so it takes one entry for each, in the action's order.
resource "bkiam_instance_grant" "biz_hosts" {
  system  = "bk_cmdb"
  subject = { type = "user", id = "carol" }
  actions = ["edit_biz_host"]
  resources = [
    { system = "bk_cmdb", type = "biz", instances = { "1" = "Blue Whale" } },
    { system = "bk_cmdb", type = "host", instances = { "7" = "host7", "8" = "host8" } },
  ]
}

# An action related to no resource type takes no entries.
resource "bkiam_instance_grant" "create_biz" {
  system    = "bk_cmdb"
  subject   = { type = "user", id = "dave" }
  actions   = ["create_biz"]
  resources = []
}

variable "hosts" {
  description = "Hosts by ID."
  type        = map(object({ name = string }))
  default     = { "1" = { name = "host1" }, "2" = { name = "host2" } }
}
