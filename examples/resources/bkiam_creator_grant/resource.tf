# Alice created three jobs: IAM grants her the actions bk_job configured
# for a job's creator (edit, list, delete, view) on each of them. Each key
# is an instance's id, each value its display name.
resource "bkiam_creator_grant" "jobs" {
  system  = "bk_job"
  type    = "job"
  creator = "alice"
  instances = {
    "job1" = "first job"
    "job2" = "second job"
    "job3" = "third job"
  }
}

# Mini apps live under projects: an instance under ancestors is keyed by
# its path in IAM's notation, outermost ancestor first and the instance
# last, so that the grant is a path (project, then mini app). Naming the
# expected actions records exactly those, and fails the apply if IAM does
# not grant one of them.
resource "bkiam_creator_grant" "mini_apps" {
  system  = "bk_sops"
  type    = "mini_app"
  creator = "alice"
  instances = {
    "/bk_sops,project,project1/bk_sops,mini_app,mini_app1/" = "first mini app"
    "/bk_sops,project,project2/bk_sops,mini_app,mini_app2/" = "second mini app"
  }
  actions = ["mini_app_view", "mini_app_edit"]
}

# The same from a list the team keeps: mini app id => its project and name.
variable "mini_apps" {
  type = map(object({ project = string, name = string }))
  default = {
    "mini_app3" = { project = "project1", name = "third mini app" }
  }
}

resource "bkiam_creator_grant" "from_a_list" {
  system    = "bk_sops"
  type      = "mini_app"
  creator   = "bob"
  instances = { for id, app in var.mini_apps : "/bk_sops,project,${app.project}/bk_sops,mini_app,${id}/" => app.name }
}
