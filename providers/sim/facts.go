package sim

import (
	"strings"
	"unicode"
)

// fact is one entry of the answer bank's fixed facts.
type fact struct {
	subject string   // how an answer names it: "the capital of France"
	value   string   // the right value, as an answer writes it
	wrong   []string // plausible wrong values; the first is the attractor
	// keys say when a task asks for this fact: any one pattern matches; a
	// pattern is groups joined by " + ", each group alternatives joined by
	// "|", each alternative a word or phrase matched on word boundaries.
	keys []string
}

// facts is ordered from the most specific to the least, because the first
// match wins ("capital of South Africa" must not be read as something else).
var facts = []fact{
	// Dates.
	{"the year of the first crewed Moon landing", "1969", []string{"1968", "1970", "1972"},
		[]string{"moon + land|landing|landed|landings|walk|walked|apollo 11", "apollo 11"}},
	{"the year the Berlin Wall fell", "1989", []string{"1991", "1987", "1990"}, []string{"berlin wall"}},
	{"the year World War II ended", "1945", []string{"1944", "1946", "1939"},
		[]string{"world war ii|world war 2|second world war|wwii|ww2 + end|ended|ends|over|finish|finished"}},
	{"the year World War I began", "1914", []string{"1918", "1912", "1915"},
		[]string{"world war i|world war 1|first world war|wwi|ww1 + start|started|begin|began|begins|outbreak|break out|broke out"}},
	{"the year the US Declaration of Independence was signed", "1776", []string{"1774", "1778", "1783"},
		[]string{"declaration of independence"}},
	{"the year the French Revolution began", "1789", []string{"1787", "1793", "1799"}, []string{"french revolution"}},
	{"the year the Titanic sank", "1912", []string{"1911", "1915", "1914"}, []string{"titanic"}},
	{"the year Columbus first reached the Americas", "1492", []string{"1493", "1498", "1502"}, []string{"columbus"}},
	{"the year of the Wright brothers' first powered flight", "1903", []string{"1905", "1901", "1908"},
		[]string{"wright brothers", "first powered flight"}},

	// Constants.
	{"pi to five decimal places", "3.14159", []string{"3.14169", "3.14259", "3.15159"}, []string{"pi|π"}},
	{"Euler's number e to five decimal places", "2.71828", []string{"2.71818", "2.72828", "2.71882"},
		[]string{"euler|eulers", "e + constant|number|natural"}},
	{"the speed of light in a vacuum in m/s", "299792458", []string{"300000000", "299792000", "186282"},
		[]string{"speed of light|light speed"}},
	{"the golden ratio to five decimal places", "1.61803", []string{"1.61830", "1.68103", "1.61083"}, []string{"golden ratio"}},
	{"the square root of 2 to five decimal places", "1.41421", []string{"1.41412", "1.41425", "1.42421"},
		[]string{"square root|sqrt|root + 2|two"}},
	{"the boiling point of water at sea level in degrees Celsius", "100", []string{"90", "212", "110"},
		[]string{"boiling|boils|boil + water"}},
	{"the freezing point of water in degrees Fahrenheit", "32", []string{"0", "31", "28"},
		[]string{"freezing|freezes|freeze + water + fahrenheit"}},
	{"absolute zero in degrees Celsius", "-273.15", []string{"-273", "-237.15", "-459.67"}, []string{"absolute zero"}},
	{"the number of planets in the Solar System", "8", []string{"9", "7", "10"},
		[]string{"planets + how many|number|count"}},
	{"the number of days in a leap year", "366", []string{"365", "364", "367"}, []string{"leap year + days|day"}},

	// Capitals.
	{"the capital of South Africa", "Pretoria", []string{"Cape Town", "Johannesburg"}, []string{"capital + south africa"}},
	{"the capital of New Zealand", "Wellington", []string{"Auckland", "Christchurch"}, []string{"capital + new zealand"}},
	{"the capital of France", "Paris", []string{"Lyon", "Marseille"}, []string{"capital + france"}},
	{"the capital of Germany", "Berlin", []string{"Bonn", "Munich", "Frankfurt"}, []string{"capital + germany"}},
	{"the capital of Italy", "Rome", []string{"Milan", "Venice"}, []string{"capital + italy"}},
	{"the capital of Spain", "Madrid", []string{"Barcelona", "Seville"}, []string{"capital + spain"}},
	{"the capital of Japan", "Tokyo", []string{"Kyoto", "Osaka"}, []string{"capital + japan"}},
	{"the capital of Australia", "Canberra", []string{"Sydney", "Melbourne"}, []string{"capital + australia"}},
	{"the capital of Canada", "Ottawa", []string{"Toronto", "Montreal"}, []string{"capital + canada"}},
	{"the capital of Brazil", "Brasília", []string{"Rio de Janeiro", "São Paulo"}, []string{"capital + brazil"}},
	{"the capital of Turkey", "Ankara", []string{"Istanbul", "Izmir"}, []string{"capital + turkey|turkiye|türkiye"}},
	{"the capital of Switzerland", "Bern", []string{"Zurich", "Geneva"}, []string{"capital + switzerland"}},
	{"the capital of China", "Beijing", []string{"Shanghai", "Hong Kong"}, []string{"capital + china"}},
	{"the capital of India", "New Delhi", []string{"Mumbai", "Kolkata"}, []string{"capital + india"}},
	{"the capital of Russia", "Moscow", []string{"Saint Petersburg", "Novosibirsk"}, []string{"capital + russia"}},
	{"the capital of Egypt", "Cairo", []string{"Alexandria", "Giza"}, []string{"capital + egypt"}},
	{"the capital of Nigeria", "Abuja", []string{"Lagos", "Kano"}, []string{"capital + nigeria"}},
	{"the capital of Pakistan", "Islamabad", []string{"Karachi", "Lahore"}, []string{"capital + pakistan"}},
	{"the capital of Morocco", "Rabat", []string{"Casablanca", "Marrakesh"}, []string{"capital + morocco"}},
	{"the capital of Vietnam", "Hanoi", []string{"Ho Chi Minh City", "Da Nang"}, []string{"capital + vietnam|viet nam"}},
	{"the capital of Kenya", "Nairobi", []string{"Mombasa", "Kisumu"}, []string{"capital + kenya"}},
	{"the capital of Argentina", "Buenos Aires", []string{"Córdoba", "Rosario"}, []string{"capital + argentina"}},
	{"the capital of Mexico", "Mexico City", []string{"Guadalajara", "Monterrey"}, []string{"capital + mexico"}},
	{"the capital of Myanmar", "Naypyidaw", []string{"Yangon", "Mandalay"}, []string{"capital + myanmar|burma"}},
	{"the capital of the United Kingdom", "London", []string{"Edinburgh", "Manchester"},
		[]string{"capital + united kingdom|uk|britain|great britain|england"}},
	{"the capital of the United States", "Washington, D.C.", []string{"New York City", "Philadelphia"},
		[]string{"capital + united states|usa|u s a|america"}},
}

// wordsOf lower-cases a task and keeps only its words, each surrounded by
// single spaces, so that phrases match on word boundaries with Contains.
// Apostrophes vanish ("Euler's" → "eulers") rather than split a word.
func wordsOf(task string) string {
	var b strings.Builder
	b.WriteByte(' ')
	space := true
	for _, r := range strings.ToLower(task) {
		switch {
		case r == '\'' || r == '\u2019':
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
			space = false
		default:
			if !space {
				b.WriteByte(' ')
				space = true
			}
		}
	}
	if !space {
		b.WriteByte(' ')
	}
	return b.String()
}

func (f fact) matches(words string) bool {
	for _, pattern := range f.keys {
		all := true
		for group := range strings.SplitSeq(pattern, " + ") {
			any := false
			for alt := range strings.SplitSeq(group, "|") {
				if strings.Contains(words, " "+alt+" ") {
					any = true
					break
				}
			}
			if !any {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func findFact(task string) (fact, bool) {
	words := wordsOf(task)
	for _, f := range facts {
		if f.matches(words) {
			return f, true
		}
	}
	return fact{}, false
}
