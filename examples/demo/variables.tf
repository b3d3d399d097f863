variable "teams" {
  description = "Teams and their access to CMDB hosts (host ID => name)."
  type = map(object({
    members = list(string)
    actions = set(string)
    hosts   = map(string)
  }))
  default = {
    ops = {
      members = ["alice", "bob"]
      actions = ["view_host", "edit_host"]
      hosts   = { "1" = "web-1", "2" = "web-2", "3" = "db-1" }
    }
    audit = {
      members = ["carol"]
      actions = ["view_host"]
      hosts   = { "3" = "db-1", "4" = "db-2" }
    }
  }
}

variable "extra_hosts" {
  description = "Hosts to add to a team's access on top of var.teams: team => host ID => name."
  type        = map(map(string))
  default     = {}
}

variable "oncall_group" {
  description = "Numeric ID of the on-call IAM user group."
  type        = string
  default     = "1"
}

variable "nightly_jobs" {
  description = "bk_job jobs alice created: job ID => name."
  type        = map(string)
  default     = { "job1" = "nightly backup", "job2" = "log rotation", "job3" = "cert renewal" }
}

variable "mini_apps" {
  description = "bk_sops mini apps dave created, with their projects."
  type        = map(object({ name = string, project = string }))
  default = {
    "mini_app1" = { name = "release checklist", project = "project1" }
    "mini_app2" = { name = "incident review", project = "project2" }
  }
}

variable "sre_members" {
  description = "Members of the SRE on-call group: username => \"permanent\" or when the membership expires."
  type        = map(string)
  default = {
    alice = "permanent"
    bob   = "2030-06-30T00:00:00Z"
  }
}
