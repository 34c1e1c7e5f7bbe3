//go:build !amd64

package imagepipe

// sumsImpls returns the implementations of frameSums that run here.
func sumsImpls() []namedSums {
	return []namedSums{{"swarSums", swarSums}}
}
