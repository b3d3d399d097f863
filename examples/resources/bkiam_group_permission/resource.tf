resource "bkiam_grade_manager" "platform" {
  system  = "bk_cmdb"
  name    = "platform"
  members = ["alice"]
  authorization_scopes = [
    {
      system  = "bk_cmdb"
      actions = ["view_host", "edit_host"]
      resources = [{
        system    = "bk_cmdb"
        type      = "host"
        instances = [{ id = "*", ancestors = [{ system = "bk_cmdb", type = "biz", id = "2" }] }]
      }]
    },
    # Another system's actions, where IAM lets bk_cmdb authorize bk_job.
    {
      system    = "bk_job"
      actions   = ["view"]
      resources = [{ system = "bk_job", type = "job", instances = [{ id = "*" }] }]
    },
  ]
  subject_scopes = [{ type = "*", id = "*" }]
}

resource "bkiam_group" "developers" {
  system           = "bk_cmdb"
  grade_manager_id = bkiam_grade_manager.platform.id
  name             = "developers"
}

# Developers may view every host of business 2, and edit two of them. An
# instance is given by its id, or by its path under its ancestors in IAM's
# notation (/SYSTEM,TYPE,ID/…/).
resource "bkiam_group_permission" "view_biz2_hosts" {
  system   = "bk_cmdb"
  group_id = bkiam_group.developers.id
  actions  = ["view_host"]
  resources = [{
    system    = "bk_cmdb"
    type      = "host"
    instances = { "/bk_cmdb,biz,2/bk_cmdb,host,*/" = "every host of business 2" }
  }]
}

resource "bkiam_group_permission" "edit_web_hosts" {
  system   = "bk_cmdb"
  group_id = bkiam_group.developers.id
  actions  = ["edit_host"]
  resources = [{
    system = "bk_cmdb"
    type   = "host"
    instances = {
      "/bk_cmdb,biz,2/bk_cmdb,host,1/" = "web-1"
      "/bk_cmdb,biz,2/bk_cmdb,host,2/" = "web-2"
    }
  }]
}

# bk_job's actions (in the grade manager's scope), granted through bk_job's
# own management API and read back there: IAM allows it because the app is a
# client of bk_job and of bk_cmdb, which created the grade manager. An app
# that is not a client of bk_job would set group_system = "bk_cmdb", and
# refresh would then trust state (bk_cmdb's list shows only its own actions).
resource "bkiam_group_permission" "view_deploy_jobs" {
  system   = "bk_job"
  group_id = bkiam_group.developers.id
  actions  = ["view"]
  resources = [{
    system    = "bk_job"
    type      = "job"
    instances = { "deploy" = "deploy" }
  }]
}
