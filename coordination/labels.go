package coordination

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Alias is the anonymous name of agent number n ("agent3"): what its peers
// and the vote enum call it. An answer's name is its label (AnswerLabel).
func Alias(n int) string {
	if n >= 0 && n < len(aliasNames) {
		return aliasNames[n] // every view names every agent: no string built each time
	}
	return "agent" + strconv.Itoa(n)
}

var aliasNames = func() (names [MaxAgents + 1]string) {
	for n := range names {
		names[n] = "agent" + strconv.Itoa(n)
	}
	return names
}()

// AnswerLabel is the label of answer k of agent number n ("agent3.2").
func AnswerLabel(n, k int) string { return fmt.Sprintf("agent%d.%d", n, k) }

// assignAliases numbers the agents agent1..agentN: a permutation drawn from the
// seed, or sorted ids (MassGen's older, deterministic mapping).
func assignAliases(ids []string, seed int64, order string) map[string]int {
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	aliases := make(map[string]int, len(ids))
	if order == AliasesAlphabetical {
		for i, id := range sorted {
			aliases[id] = i + 1
		}
		return aliases
	}
	// Permute the sorted ids so the mapping depends only on the seed and the
	// set of ids, not on the order they were listed in.
	r := rand.New(rand.NewPCG(uint64(seed), 0x6c61626573)) // "labels"
	perm := r.Perm(len(sorted))
	for i, id := range sorted {
		aliases[id] = perm[i] + 1
	}
	return aliases
}

// parseAlias reads an alias "agentN" or a label "agentN.k" and returns N (and
// k, 0 if absent).
func parseAlias(s string) (n, k int, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(s), "agent")
	if !found || rest == "" {
		return 0, 0, false
	}
	num, ver, hasVer := strings.Cut(rest, ".")
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return 0, 0, false
	}
	if hasVer {
		k, err = strconv.Atoi(ver)
		if err != nil || k < 1 {
			return 0, 0, false
		}
	}
	return n, k, true
}
