# Adopt the creator grants of a user for one resource type: SYSTEM/TYPE/CREATOR.
# The next apply registers what the configuration declares; IAM treats what
# the creator already holds as a no-op.
terraform import bkiam_creator_grant.jobs bk_job/job/alice
