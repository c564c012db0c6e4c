package core

import (
	"github.com/tfyarn/tfyarn/internal/framework/tensorflow"
	"github.com/tfyarn/tfyarn/internal/frameworks"
	"github.com/tfyarn/tfyarn/internal/success"
)

// The policies the machine's tests run under: the machine knows them only
// as Policies (the registry gives the AM one); its tests name them.
type (
	ChiefPolicy = tensorflow.ChiefPolicy
	AllSucceed  = success.AllSucceed
	PolicyFunc  = success.PolicyFunc
)

// PolicyFor is the registry's, as the AM and run --local ask it.
var PolicyFor = frameworks.PolicyFor
