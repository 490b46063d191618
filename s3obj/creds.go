package s3obj

import (
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// credentialChain finds credentials as doc.go says: the environment, the
// shared credentials file, the shared config file, for profile.
func credentialChain(profile string, conf profileConfig) *credentials.Credentials {
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{Profile: profile},
		&configKeys{conf: conf},
	})
}

// configKeys are credentials written in the shared config file's profile,
// where the AWS CLI also looks (minio-go reads only the credentials file).
type configKeys struct {
	conf      profileConfig
	retrieved bool
}

func (c *configKeys) Retrieve() (credentials.Value, error) {
	c.retrieved = true
	v := credentials.Value{
		AccessKeyID:     c.conf.get("aws_access_key_id"),
		SecretAccessKey: c.conf.get("aws_secret_access_key"),
		SessionToken:    c.conf.get("aws_session_token"),
		SignerType:      credentials.SignatureV4,
	}
	if v.AccessKeyID == "" || v.SecretAccessKey == "" {
		v.SignerType = credentials.SignatureAnonymous
	}
	return v, nil
}

func (c *configKeys) RetrieveWithCredContext(*credentials.CredContext) (credentials.Value, error) {
	return c.Retrieve()
}

func (c *configKeys) IsExpired() bool { return !c.retrieved }
