package cdi

import (
	"errors"
	"math/big"
	"strconv"
	"strings"
)

// ParseQuantity reads a Kubernetes resource quantity ("10Gi", "1.5G",
// "10737418240", "1e9", "500M") as the number of bytes, rounded up to a
// whole byte as resource.Quantity.Value rounds it. Negative and
// fractional-of-nothing values ("", ".", "-1Gi") are refused, as are sizes
// past 2^63-1.
//
// The grammar is Kubernetes': a decimal number (digits, at most one
// point) then one suffix: a binary one (Ki Mi Gi Ti Pi Ei), a decimal
// one (n u m "" k M G T P E), or an exponent (e or E, then a signed
// integer).
func ParseQuantity(s string) (int64, error) {
	num, suffix := splitQuantity(s)
	if num == "" || num == "." || strings.Count(num, ".") > 1 {
		return 0, errors.New("is not a quantity (a number, then Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E or nothing)")
	}
	value, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, errors.New("is not a quantity")
	}
	scale, err := quantityScale(suffix)
	if err != nil {
		return 0, err
	}
	value.Mul(value, scale)
	// Round up, as Quantity.Value does: 0.5 is 1, 100m is 1.
	whole := new(big.Int).Quo(value.Num(), value.Denom())
	if new(big.Rat).SetInt(whole).Cmp(value) < 0 {
		whole.Add(whole, big.NewInt(1))
	}
	if !whole.IsInt64() {
		return 0, errors.New("is larger than 2^63-1 bytes")
	}
	return whole.Int64(), nil
}

// splitQuantity cuts s where its number (digits and points) ends. A sign
// is not taken: no size is negative, and "+" is never written.
func splitQuantity(s string) (num, suffix string) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	return s[:i], s[i:]
}

var binarySuffixes = map[string]uint{"": 0, "Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

var decimalSuffixes = map[string]int{"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

// quantityScale is what a suffix multiplies by.
func quantityScale(suffix string) (*big.Rat, error) {
	if shift, ok := binarySuffixes[suffix]; ok {
		return new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), shift)), nil
	}
	if exp, ok := decimalSuffixes[suffix]; ok {
		return pow10(exp), nil
	}
	if len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E') {
		exp, err := strconv.Atoi(suffix[1:])
		if err == nil && exp >= -30 && exp <= 30 {
			return pow10(exp), nil
		}
	}
	return nil, errors.New("has an unknown suffix " + strconv.Quote(suffix) + " (Ki, Mi, Gi, Ti, Pi, Ei, k, M, G, T, P, E, or an exponent e9)")
}

func pow10(exp int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
	if exp < 0 {
		return new(big.Rat).SetFrac(big.NewInt(1), p)
	}
	return new(big.Rat).SetInt(p)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
