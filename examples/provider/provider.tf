# Through the IAM API gateway: the app's credentials come from the
# environment (BKIAM_APP_CODE / BKIAM_APP_SECRET), never from the file.
provider "bkiam" {
  apigw_url = "https://bkapi.example.com/api/bk-iam/prod"
}

# Through the ESB of a legacy PaaS site, which also demands a user.
provider "bkiam" {
  alias    = "esb"
  esb_url  = "https://paas.example.com"
  username = "admin"
}
