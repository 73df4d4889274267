// Package changelog holds the repository's CHANGELOG.md to what it
// promises a caller: each migration of a row under "Changed (breaks
// callers)" migrates a caller. It has no code, only its test,
// TestMigrations, and the callers in testdata/migrations.
package changelog
