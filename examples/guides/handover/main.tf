# alice leaves; carol takes over what alice holds in bk_cmdb. The values
# are what step 1 generated from IAM: alice's memberships (her
# bkiam_user_groups, imported) and her own grants (terraform query).
module "handover" {
  source = "../../modules/handover"

  system    = "bk_cmdb"
  leaver    = "alice"
  successor = "carol"

  # group id => alice's expiry, as the import generated it.
  groups = {
    "4" = "permanent"
  }

  # alice's grants, as -generate-config-out wrote them (no expires_at:
  # permanent).
  grants = {
    view_host = {
      actions = ["view_host"]
      resources = [{
        system    = "bk_cmdb"
        type      = "host"
        instances = { "1" = "1", "2" = "2" }
      }]
    }
  }

  # Step 2 applies "overlap"; step 3 changes it to "complete".
  phase = "overlap"
}

output "handover" {
  value = {
    successor_groups = module.handover.successor_groups
    leaver_holds     = module.handover.leaver_holds
  }
}
