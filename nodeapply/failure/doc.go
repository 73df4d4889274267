// Package failure names a ping that got no usable answer: the words that
// go into the Failure field of a [nodeapply.Ping], from the HTTP status
// code of the reply or the error of the request. The words are short, the
// same at every ping that fails the same way, and never hold a URL, a
// token or a body. The package is pure: it reads no clock, does no I/O and
// keeps no state.
package failure
