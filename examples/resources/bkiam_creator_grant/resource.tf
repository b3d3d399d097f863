# Alice created three jobs: IAM grants her the actions bk_job configured
# for a job's creator (edit, list, delete, view) on each of them.
resource "bkiam_creator_grant" "jobs" {
  system  = "bk_job"
  type    = "job"
  creator = "alice"
  instances = {
    "job1" = { name = "first job" }
    "job2" = { name = "second job" }
    "job3" = { name = "third job" }
  }
}

# Mini apps live under projects: the ancestors make each grant a path
# (project, then mini app). Naming the expected actions records exactly
# those, and fails the apply if IAM does not grant one of them.
resource "bkiam_creator_grant" "mini_apps" {
  system  = "bk_sops"
  type    = "mini_app"
  creator = "alice"
  instances = {
    "mini_app1" = {
      name      = "first mini app"
      ancestors = [{ system = "bk_sops", type = "project", id = "project1" }]
    }
    "mini_app2" = {
      name      = "second mini app"
      ancestors = [{ system = "bk_sops", type = "project", id = "project2" }]
    }
  }
  actions = ["mini_app_view", "mini_app_edit"]
}
