// Package cliout renders command output: aligned text tables for people and
// indented JSON for scripts.
package cliout
