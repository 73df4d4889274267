package pingclient

import (
	"bytes"
	"errors"
)

// newToken watches the bearer token's file.
func newToken(c *Config) *watched[string] {
	return &watched[string]{
		what:  "the bearer token",
		flags: []string{c.flag(flagTokenFile)},
		paths: []string{c.TokenFile},
		parse: func(contents [][]byte) (string, error) { return parseToken(contents[0]) },
	}
}

// parseToken returns the token in a file's content, without the white
// space around it. A token is visible ASCII (RFC 6750's token68 and
// more): a file that is empty, or holds white space or other bytes inside
// the token, is half written or not a token. The errors never hold the
// content.
func parseToken(content []byte) (string, error) {
	token := bytes.TrimSpace(content)
	if len(token) == 0 {
		return "", errors.New("no token: the file is empty or white space")
	}
	for _, b := range token {
		if b < 0x21 || b > 0x7e {
			return "", errors.New("not a bearer token: it holds white space, control characters or non-ASCII bytes")
		}
	}
	return string(token), nil
}
