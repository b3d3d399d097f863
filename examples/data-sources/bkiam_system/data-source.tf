# The model bk_cmdb registered in IAM, for a module to check or iterate.
data "bkiam_system" "cmdb" {
  system = "bk_cmdb"
}

variable "actions" {
  description = "Actions a module grants on hosts."
  type        = list(string)
  default     = ["view_host", "edit_host"]
}

# The resource types each action's grant must give, in order.
output "host_action_resource_types" {
  value = {
    for a in var.actions : a => [
      for rt in data.bkiam_system.cmdb.actions[a].related_resource_types : "${rt.system}/${rt.id}"
    ]
  }
}

# A plan warns when an action is not one of the system's.
check "actions_exist" {
  assert {
    condition     = alltrue([for a in var.actions : contains(keys(data.bkiam_system.cmdb.actions), a)])
    error_message = "Every action in var.actions must be an action of bk_cmdb."
  }
}
