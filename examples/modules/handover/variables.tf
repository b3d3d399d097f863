variable "system" {
  description = "The system whose management API manages the groups (the system that created their grade managers), and of the grants' actions, e.g. bk_cmdb."
  type        = string
  default     = "bk_cmdb"
}

variable "leaver" {
  description = "Username of the person who hands over."
  type        = string
}

variable "successor" {
  description = "Username of the person who takes over."
  type        = string

  validation {
    condition     = var.successor != "admin"
    error_message = "successor must not be admin: IAM's super user holds everything and is added to no group."
  }
}

variable "groups" {
  description = "The leaver's memberships to hand over: group id => expiry exactly as IAM holds it for the leaver (\"permanent\" or an RFC 3339 time). The successor joins each until the same time."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for g, e in var.groups : can(regex("^[0-9]+$", g)) && e != "expires_in"])
    error_message = "groups: keys are numeric group ids, values \"permanent\" or an RFC 3339 time (the leaver's expiry, not a rolling \"expires_in\")."
  }
}

variable "grants" {
  description = "The leaver's own grants to hand over, each as a bkiam_instance_grant of the leaver has it (as -generate-config-out writes it): name => { actions, resources, expires_at }. The successor gets each with the same expiry."
  type = map(object({
    actions = list(string)
    resources = list(object({
      system    = string
      type      = string
      instances = map(string)
    }))
    expires_at = optional(string)
  }))
  default = {}
}

variable "phase" {
  description = "\"overlap\": the successor gets the leaver's groups and grants, and the module holds the leaver's, which the root configuration imports with import blocks (IAM unchanged for the leaver); both hold access. \"complete\": the leaver is removed from those groups and loses those grants; the successor keeps them."
  type        = string
  default     = "overlap"

  validation {
    condition     = contains(["overlap", "complete"], var.phase)
    error_message = "phase must be \"overlap\" or \"complete\"."
  }
}
