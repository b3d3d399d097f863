# alice leaves; carol takes over what alice holds in bk_cmdb. The values
# are what step 1 generated from IAM: alice's memberships (her
# bkiam_user_groups, imported) and her own grants (terraform query).
# imports.tf adopts them into the module's resources of the leaver.

# The grants' long import IDs read IAM only with detect_drift on; the
# rest comes from the environment (BKIAM_APIGW_URL, BKIAM_APP_CODE,
# BKIAM_APP_SECRET).
provider "bkiam" {
  detect_drift = true
}

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

  # Step 2 applies "overlap"; step 3 changes it to "complete" and deletes
  # imports.tf.
  phase = "overlap"
}

output "handover" {
  value = {
    successor_groups = module.handover.successor_groups
    leaver_holds     = module.handover.leaver_holds
  }
}
