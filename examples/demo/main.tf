# The demo that `make demo` runs against the IAM sandbox: a platform team's
# permissions in three BlueKing systems, declared in one place.
#
# The provider reads its endpoint and app credentials from the environment
# (BKIAM_APIGW_URL, BKIAM_APP_CODE, BKIAM_APP_SECRET), so the same
# configuration runs against the sandbox and a real site.
provider "bkiam" {}

# Each team's access to CMDB hosts, through a reusable module.
module "team" {
  source   = "../modules/team_access"
  for_each = var.teams

  members   = each.value.members
  actions   = each.value.actions
  instances = merge(each.value.hosts, lookup(var.extra_hosts, each.key, {}))
}

# The on-call user group may view every host of every team.
resource "bkiam_instance_grant" "oncall" {
  system  = "bk_cmdb"
  subject = { type = "group", id = var.oncall_group }
  actions = ["view_host"]
  resources = [{
    system    = "bk_cmdb"
    type      = "host"
    instances = merge([for team in var.teams : team.hosts]...)
  }]
}

# Alice created the nightly jobs: bk_job grants a job's creator edit, list,
# delete and view on it.
resource "bkiam_creator_grant" "nightly_jobs" {
  system    = "bk_job"
  type      = "job"
  creator   = "alice"
  instances = var.nightly_jobs
}

# Dave created mini apps in two projects: each is granted on its path,
# project then mini app, which is also its key.
resource "bkiam_creator_grant" "mini_apps" {
  system  = "bk_sops"
  type    = "mini_app"
  creator = "dave"
  instances = {
    for id, app in var.mini_apps : "/bk_sops,project,${app.project}/bk_sops,mini_app,${id}/" => app.name
  }
  actions = ["mini_app_view", "mini_app_edit"]
}

# The SRE team administers its own user group in CMDB: a grade manager
# (Carol), the group, and its members, with Bob's membership ending.
resource "bkiam_grade_manager" "sre" {
  system      = "bk_cmdb"
  name        = "sre"
  description = "Site reliability engineering"
  members     = ["carol"]
  authorization_scopes = [{
    system  = "bk_cmdb"
    actions = ["view_host", "edit_host"]
    resources = [{
      system    = "bk_cmdb"
      type      = "host"
      instances = [for id in keys(merge([for team in var.teams : team.hosts]...)) : { id = id }]
    }]
  }]
  subject_scopes = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "sre" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.sre.id
  name             = "sre-oncall"
  description      = "SREs on call"
}

resource "bkiam_group_members" "sre" {
  system   = "bk_cmdb"
  group_id = bkiam_group.sre.id
  users    = var.sre_members
}

# What the SRE group may do: view and edit every team's hosts. Its members
# get it through the group.
resource "bkiam_group_permission" "sre_hosts" {
  system   = "bk_cmdb"
  group_id = bkiam_group.sre.id
  actions  = ["view_host", "edit_host"]
  resources = [{
    system    = "bk_cmdb"
    type      = "host"
    instances = merge([for team in var.teams : team.hosts]...)
  }]
}
