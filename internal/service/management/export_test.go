package management

// The acceptance and protocol tests beside the resources (package
// management_test) reach these through the names below; the provider
// itself needs none of them.

const PermanentMember = permanentMember
