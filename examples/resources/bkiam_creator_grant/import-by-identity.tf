# Terraform and OpenTofu 1.12+: adopt alice's creator grants of bk_job jobs.
import {
  to = bkiam_creator_grant.jobs
  identity = {
    system  = "bk_job"
    type    = "job"
    creator = "alice"
  }
}
