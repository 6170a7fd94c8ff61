package uuid_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

const canonical = "f47ac10b-58cc-4372-a567-0e02b2c3d479"

func TestHVAccepts(t *testing.T) {
	for _, s := range []string{
		canonical,
		strings.ToUpper(canonical),
		"00000000-0000-0000-0000-000000000000",
		"ffffffff-ffff-ffff-ffff-ffffffffffff",
		"urn:uuid:" + canonical,
		"URN:UUID:" + canonical,
		"Urn:Uuid:" + canonical,
		"{" + canonical + "}",
		strings.ReplaceAll(canonical, "-", ""),
		strings.ToUpper(strings.ReplaceAll(canonical, "-", "")),
	} {
		if err := uuid.Validate(s); err != nil {
			t.Errorf("Validate(%q) = %v, want nil", s, err)
		}
	}
}

func TestHVRejects(t *testing.T) {
	for _, s := range []string{
		"f47ac10b-58cc-4372-a567-0e02b2c3d47g",          // non-hex digit
		"f47ac10b-58cc-4372-a567-0e02b2c3d4 9",          // space
		"f47ac10b58cc-4372-a567-0e02b2c3d479-",          // dash misplaced
		"f47ac10b-58cc-4372-a5670-e02b2c3d479",          // dash misplaced
		"f47ac10b+58cc+4372+a567+0e02b2c3d479",          // wrong separators
		"urn:uuix:" + canonical,                         // wrong urn prefix
		"uuid:urn:" + canonical,                         // wrong urn prefix
		"urn:uuid:f47ac10b-58cc-4372-a567-0e02b2c3d4z9", // bad hex after urn
		"(" + canonical + ")",                           // not braces
		"{" + canonical + ")",                           // unbalanced
		"[" + canonical + "}",                           // unbalanced
		"{f47ac10b-58cc-4372-a567-0e02b2c3d4x9}",        // bad hex in braces
		"f47ac10b58cc4372a5670e02b2c3d4x9",              // 32 chars, bad hex
		"f47ac10b58cc4372a5670e02b2c3d47-",              // 32 chars, dash
	} {
		if err := uuid.Validate(s); err == nil {
			t.Errorf("Validate(%q) = nil, want an error", s)
		}
	}
}

func TestHVLengthError(t *testing.T) {
	for _, s := range []string{
		"",
		"f47ac10b",
		canonical[:35],
		canonical + "0",
		"urn:uuid:" + canonical + "0",
		strings.ReplaceAll(canonical, "-", "")[:31],
		strings.Repeat("a", 100),
	} {
		err := uuid.Validate(s)
		if err == nil {
			t.Errorf("Validate(%q) = nil, want an invalid length error", s)
			continue
		}
		if !uuid.IsInvalidLengthError(err) {
			t.Errorf("Validate(%q) = %v; IsInvalidLengthError is false", s, err)
		}
	}
}

// Validate must agree with Parse on every input that is not in the braced form
// (Validate additionally checks the braces).
func TestHVAgreesWithParse(t *testing.T) {
	base := []string{
		canonical,
		"urn:uuid:" + canonical,
		strings.ReplaceAll(canonical, "-", ""),
	}
	for _, s := range base {
		for i := 0; i < len(s); i++ {
			for _, c := range []byte{'0', 'a', 'F', 'g', '-', ':', ' ', 'Z'} {
				mutated := s[:i] + string(c) + s[i+1:]
				_, perr := uuid.Parse(mutated)
				verr := uuid.Validate(mutated)
				if (perr == nil) != (verr == nil) {
					t.Errorf("Parse(%q) error %v, Validate error %v: they must agree", mutated, perr, verr)
				}
			}
		}
	}
}

func TestHVDoesNotAllocate(t *testing.T) {
	s := "urn:uuid:" + canonical
	allocs := testing.AllocsPerRun(100, func() {
		if err := uuid.Validate(s); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Validate of a valid UUID allocated %v times per call, want 0", allocs)
	}
}
