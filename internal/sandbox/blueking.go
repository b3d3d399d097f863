package sandbox

import (
	_ "embed"
	"fmt"
)

//go:embed blueking_model.json
var blueKingModelJSON []byte

// BlueKingModel returns a fresh copy of the embedded BlueKing model (blueking_model.json): subsets
// of the IAM models that bk_cmdb, bk_job and bk_sops really register, so that a test can run on
// systems shaped like the real ones rather than on the default model's toy systems. What sets them
// apart is that most bk_job actions relate to bk_cmdb's biz and host and its resource types have
// bk_cmdb's biz as parent: resource types of another system, written "system:type" in the model.
//
// Where each system comes from (commits, licences and what was kept, mapped or left out are in
// blueking_model.md):
//   - bk_cmdb: the Go code that registers CMDB's model, bk-cmdb src/ac/iam
//     (initial_resources.go, initial_instance_selections.go, initial_actions.go,
//     initial_resource_creator_actions.go).
//   - bk_job: the migrations bk-job support-files/bkiam/0001…0012, applied in order.
//   - bk_sops: the migrations bk-sops support-files/iam/01…15, applied in order.
//
// Users, groups, departments, apps, tokens and limits are those of the default model. Unlike
// DefaultModel it returns the validation error instead of panicking: the model is a fixture that
// only tests load, and blueking_test.go is where a broken one shows.
func BlueKingModel() (*Model, error) {
	m, err := LoadModel(blueKingModelJSON)
	if err != nil {
		return nil, fmt.Errorf("embedded BlueKing model: %w", err)
	}
	return m, nil
}
