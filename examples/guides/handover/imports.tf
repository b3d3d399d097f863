# Step 2 adopts what alice holds, as step 1 found it, into the module's
# resources of the leaver: the plan reads IAM and shows "will be
# imported", and the apply sends nothing for alice. Import blocks live in
# the root module and name the module's resources by their addresses
# (Terraform 1.5+, OpenTofu). Delete this file at step 3: the resources
# it names leave the configuration there.
import {
  to = module.handover.bkiam_user_groups.leaver[0]
  id = "bk_cmdb/user/alice/4" # SYSTEM/user/USERNAME/GROUP_IDS: the keys of groups
}

# One per entry of grants, by its key. The long import ID (the grant's
# actions and resource type) needs detect_drift, as the provider block
# in main.tf sets it.
import {
  to = module.handover.bkiam_instance_grant.leaver["view_host"]
  id = "bk_cmdb/user/alice/view_host/bk_cmdb/host"
}
