variable "system" {
  description = "IAM system of the actions and the resource type, e.g. bk_cmdb."
  type        = string
  default     = "bk_cmdb"
}

variable "members" {
  description = "Usernames of the team's members."
  type        = list(string)

  validation {
    condition     = length(var.members) == length(distinct(var.members))
    error_message = "members must not repeat a username."
  }
}

variable "actions" {
  description = "Actions every member gets, e.g. [\"view_host\", \"edit_host\"]."
  type        = set(string)
}

variable "resource_type" {
  description = "Resource type of the instances, e.g. host."
  type        = string
  default     = "host"
}

variable "instances" {
  description = "The instances: instance ID => display name. At least one: IAM reads an empty list as every instance, and the provider refuses it."
  type        = map(string)
}

variable "expires_at" {
  description = "When the team's access ends (RFC 3339), or null for permanent."
  type        = string
  default     = null
}
