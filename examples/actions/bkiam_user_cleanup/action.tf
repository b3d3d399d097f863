# Offboarding: run with Terraform 1.14 or later,
#   terraform apply -invoke=action.bkiam_user_cleanup.leaver
# The plan checks that the site lets the app call IAM's cleanup; the apply
# ends once IAM has queued it, and IAM cleans in the background.
action "bkiam_user_cleanup" "leaver" {
  config {
    users = ["alice"]
  }
}

# Keep what was given after a date (IAM 1.10 and later only: an older IAM
# ignores before and removes everything, hence the acknowledgement).
action "bkiam_user_cleanup" "leaver_since" {
  config {
    users              = ["bob"]
    before             = "2026-01-01T00:00:00+08:00"
    iam_honours_before = true
  }
}
