import { expect } from 'chai';
import type { CarrierCity } from '../../services/shipping';
import { MOROCCAN_CITIES, cityKey, knownCity, matchCity } from '../../services/shipping';

/**
 * A carrier's city list as Moroccan carriers give it: Latin names without accents, a few with
 * their Arabic name, a district beside its city (`Dcheira` and `Dcheira El Jihadia`), and a town
 * the built-in table does not know (`Oulad Hriz`).
 */
const CARRIER: CarrierCity[] = [
  ['1', 'Casablanca', 'الدار البيضاء'],
  ['2', 'Rabat'],
  ['3', 'Fes', 'فاس'],
  ['4', 'Marrakech'],
  ['5', 'Tanger'],
  ['6', 'Agadir'],
  ['7', 'Meknes'],
  ['8', 'Oujda'],
  ['9', 'Kenitra'],
  ['10', 'Tetouan'],
  ['11', 'Sale'],
  ['12', 'Temara'],
  ['13', 'Safi'],
  ['14', 'Mohammedia'],
  ['15', 'Khouribga'],
  ['16', 'El Jadida'],
  ['17', 'Beni Mellal'],
  ['18', 'Nador'],
  ['19', 'Taza'],
  ['20', 'Settat'],
  ['21', 'Berrechid'],
  ['22', 'Khemisset'],
  ['23', 'Inezgane'],
  ['24', 'Ksar El Kebir'],
  ['25', 'Larache'],
  ['26', 'Guelmim'],
  ['27', 'Khenifra'],
  ['28', 'Berkane'],
  ['29', 'Taourirt'],
  ['30', 'Bouskoura'],
  ['31', 'Fquih Ben Salah'],
  ['32', 'Dcheira'],
  ['33', 'Dcheira El Jihadia'],
  ['34', 'Oued Zem'],
  ['35', 'Errachidia'],
  ['36', 'Ouarzazate'],
  ['37', 'Essaouira'],
  ['38', 'Laayoune'],
  ['39', 'Dakhla'],
  ['40', 'Tiznit'],
  ['41', 'Taroudant'],
  ['42', 'Al Hoceima'],
  ['43', 'Chefchaouen'],
  ['44', 'Benslimane'],
  ['45', 'Ben Guerir'],
  ['46', 'Ait Melloul'],
  ['47', 'Oulad Hriz'],
  ['48', 'Sidi Slimane'],
  ['49', 'Had Soualem'],
  ['50', 'Martil'],
].map(([id, name, arabicName]) => ({ id, name, arabicName: arabicName ?? null }));

/**
 * Two hundred cities as customers typed them in the order files of shops (Latin, French, Arabic, short
 * forms, typos, districts), each with the carrier's id it must become, or null: a person chooses.
 */
const WRITTEN: Array<[string, string | null]> = [
  // Casablanca
  ['Casablanca', '1'],
  ['casablanca', '1'],
  ['CASABLANCA', '1'],
  [' Casablanca ', '1'],
  ['Casa', '1'],
  ['casa', '1'],
  ['CASA', '1'],
  ['Dar El Beida', '1'],
  ['Casablanka', '1'],
  ['الدار البيضاء', '1'],
  ['الدارالبيضاء', '1'],
  ['البيضاء', '1'],
  ['كازا', '1'],
  ['Casablnca', null],
  ['Casa Maarif', null],
  ['Casablanca Ain Sebaa', null],
  ['Sidi Maarouf', null],
  ['Casa-blanca', '1'],
  ['Ca sa', '1'],
  ['Kasablanka', null],
  // Rabat, Salé, Témara
  ['Rabat', '2'],
  ['rabat', '2'],
  ['RABAT', '2'],
  ['الرباط', '2'],
  ['Rbat', '2'],
  ['Rabat Agdal', null],
  ['Salé', '11'],
  ['Sale', '11'],
  ['SALE', '11'],
  ['سلا', '11'],
  ['Sla', '11'],
  ['Salé Tabriquet', null],
  ['Témara', '12'],
  ['Temara', '12'],
  ['تمارة', '12'],
  ['Tmara', '12'],
  ['Temmara', null],
  // Fès
  ['Fès', '3'],
  ['Fes', '3'],
  ['fes', '3'],
  ['FES', '3'],
  ['FÈS', '3'],
  ['Fez', '3'],
  ['فاس', '3'],
  ['Fes Medina', null],
  ['Fès Médina', null],
  ['Fes-Saiss', null],
  ['Fass', null],
  ['Fas', '3'],
  // Marrakech
  ['Marrakech', '4'],
  ['marrakech', '4'],
  ['Marrakesh', '4'],
  ['Marrakch', '4'],
  ['Marakech', '4'],
  ['MARRAKECH', '4'],
  ['مراكش', '4'],
  ['Marrakech Gueliz', null],
  ['Marrkech', null],
  ['Marrakeche', '4'],
  // Tanger
  ['Tanger', '5'],
  ['Tangier', '5'],
  ['Tangiers', '5'],
  ['tanger', '5'],
  ['Tanja', '5'],
  ['طنجة', '5'],
  ['طنجه', '5'],
  ['Tanger Med', null],
  ['Tangr', null],
  // Agadir, Inezgane, Aït Melloul, Dcheira
  ['Agadir', '6'],
  ['agadir', '6'],
  ['أكادير', '6'],
  ['اكادير', '6'],
  ['Agadire', null],
  ['Inezgane', '23'],
  ['Inzegane', '23'],
  ['إنزكان', '23'],
  ['Aït Melloul', '46'],
  ['Ait Melloul', '46'],
  ['ait-melloul', '46'],
  ['أيت ملول', '46'],
  ['Dcheira', '32'],
  ['Dcheira El Jihadia', '33'],
  ['الدشيرة', null],
  ['الدشيرة الجهادية', null],
  // Meknès
  ['Meknès', '7'],
  ['Meknes', '7'],
  ['MEKNES', '7'],
  ['Meknass', '7'],
  ['مكناس', '7'],
  ['Mekness', null],
  // Oujda
  ['Oujda', '8'],
  ['oujda', '8'],
  ['Ujda', '8'],
  ['وجدة', '8'],
  ['Oujda Angad', null],
  // Kénitra
  ['Kénitra', '9'],
  ['Kenitra', '9'],
  ['KENITRA', '9'],
  ['Knitra', '9'],
  ['القنيطرة', '9'],
  ['Kenitr', null],
  // Tétouan, Martil
  ['Tétouan', '10'],
  ['Tetouan', '10'],
  ['Tetuan', '10'],
  ['تطوان', '10'],
  ['Martil', '50'],
  ['مرتيل', '50'],
  ['Martyl', '50'],
  // Safi
  ['Safi', '13'],
  ['Asfi', '13'],
  ['آسفي', '13'],
  ['أسفي', '13'],
  ['اسفي', '13'],
  // Mohammédia
  ['Mohammédia', '14'],
  ['Mohammedia', '14'],
  ['Mohammadia', '14'],
  ['Mohamedia', '14'],
  ['المحمدية', '14'],
  ['Mohemmedia', null],
  // Khouribga, Oued Zem, Fquih Ben Salah, Béni Mellal
  ['Khouribga', '15'],
  ['Khribga', '15'],
  ['خريبكة', '15'],
  ['Oued Zem', '34'],
  ['Oued-Zem', '34'],
  ['وادي زم', '34'],
  ['Fquih Ben Salah', '31'],
  ['Fkih Ben Salah', '31'],
  ['الفقيه بن صالح', '31'],
  ['Béni Mellal', '17'],
  ['Beni Mellal', '17'],
  ['Bni Mellal', '17'],
  ['بني ملال', '17'],
  ['BeniMellal', '17'],
  // El Jadida
  ['El Jadida', '16'],
  ['el jadida', '16'],
  ['Eljadida', '16'],
  ['Al Jadida', '16'],
  ['Jadida', '16'],
  ['الجديدة', '16'],
  ['El Jadida Centre', null],
  // The Rif and the East
  ['Nador', '18'],
  ['الناظور', '18'],
  ['Nadour', '18'],
  ['Al Hoceïma', '42'],
  ['Al Hoceima', '42'],
  ['El Hoceima', '42'],
  ['Hoceima', '42'],
  ['الحسيمة', '42'],
  ['Berkane', '28'],
  ['بركان', '28'],
  ['Taourirt', '29'],
  ['تاوريرت', '29'],
  ['Taza', '19'],
  ['تازة', '19'],
  ['Chefchaouen', '43'],
  ['Chaouen', '43'],
  ['شفشاون', '43'],
  // Chaouia and around Casablanca
  ['Settat', '20'],
  ['سطات', '20'],
  ['Berrechid', '21'],
  ['Berchid', '21'],
  ['برشيد', '21'],
  ['Bouskoura', '30'],
  ['بوسكورة', '30'],
  ['Had Soualem', '49'],
  ['حد السوالم', '49'],
  ['Benslimane', '44'],
  ['Ben Slimane', '44'],
  ['بنسليمان', '44'],
  ['Oulad Hriz', '47'],
  ['Ouled Hriz', null],
  // The Gharb, the Middle Atlas
  ['Khémisset', '22'],
  ['Khemisset', '22'],
  ['الخميسات', '22'],
  ['Sidi Slimane', '48'],
  ['سيدي سليمان', '48'],
  ['Khénifra', '27'],
  ['Khenifra', '27'],
  ['خنيفرة', '27'],
  ['Ksar El Kébir', '24'],
  ['Ksar El Kebir', '24'],
  ['القصر الكبير', '24'],
  ['Larache', '25'],
  ['العرائش', '25'],
  // The South
  ['Guelmim', '26'],
  ['Goulimine', '26'],
  ['كلميم', '26'],
  ['Errachidia', '35'],
  ['Er-Rachidia', '35'],
  ['الرشيدية', '35'],
  ['Ouarzazate', '36'],
  ['ورزازات', '36'],
  ['Essaouira', '37'],
  ['الصويرة', '37'],
  ['Laâyoune', '38'],
  ['Laayoune', '38'],
  ['العيون', '38'],
  ['Dakhla', '39'],
  ['الداخلة', '39'],
  ['Tiznit', '40'],
  ['تيزنيت', '40'],
  ['Taroudant', '41'],
  ['تارودانت', '41'],
  ['Ben Guerir', '45'],
  ['Benguerir', '45'],
  ['بن جرير', '45'],
  // Cities the carrier does not serve, and what is no city at all
  ['Ifrane', null],
  ['إفران', null],
  ['ازرو', null],
  ['فــاس', '3'],
  ['وجده', '8'],
  ['الجديده', '16'],
  ['سلا الجديدة', null],
  ['طنجة البالية', null],
  ['الدار البيضاء عين السبع', null],
  ['Zagora', null],
  ['Azrou', null],
  ['Midelt', null],
  ['Sefrou', null],
  ['Centre ville', null],
  ['Médina', null],
  ['Hay Mohammadi', null],
  ['0612345678', null],
  ['?', null],
  ['', null],
  ['   ', null],
  ['-', null],
];

describe('shipping: an order’s city becomes a carrier’s city without a guess', () => {
  it('200 cities as customers wrote them: the carrier’s id, or a choice for a person', () => {
    expect(WRITTEN.length).to.be.at.least(200);
    const wrong = WRITTEN.flatMap(([written, expected]) => {
      const match = matchCity(written, CARRIER);
      const got = match.matched ? match.city.id : null;
      return got === expected ? [] : [`${JSON.stringify(written)}: expected ${expected}, got ${got}`];
    });
    expect(wrong).to.deep.equal([]);
    // Each kind the test means to cover is there: Arabic, accented French, short forms, districts.
    expect(WRITTEN.filter(([w]) => /\p{Script=Arabic}/u.test(w)).length).to.be.at.least(60);
    expect(WRITTEN.filter(([w, id]) => /[éèêëïâ]/i.test(w) && id !== null).length).to.be.at.least(10);
    expect(WRITTEN.filter(([, id]) => id === null).length).to.be.at.least(40);
  });

  it('a match says how it was made; two candidates are named, none names none', () => {
    expect(matchCity('Fès', CARRIER)).to.deep.include({ matched: true, by: 'exact' });
    expect(matchCity('Fez', CARRIER)).to.deep.include({ matched: true, by: 'known' });
    const two = matchCity('الدشيرة', CARRIER);
    expect(two.matched).to.equal(false);
    expect(two.matched ? [] : two.candidates.map((c) => c.id).sort()).to.deep.equal(['32', '33']);
    expect(matchCity('Fes Medina', CARRIER)).to.deep.equal({ matched: false, candidates: [] });
    expect(matchCity(null, CARRIER)).to.deep.equal({ matched: false, candidates: [] });
  });

  it('the same written city twice in a carrier’s list is a choice, not the first of them', () => {
    const twice = [...CARRIER, { id: '99', name: 'FES', arabicName: null }];
    const match = matchCity('fes', twice);
    expect(match.matched).to.equal(false);
    expect(match.matched ? [] : match.candidates.map((c) => c.id).sort()).to.deep.equal(['3', '99']);
  });

  it('the shop’s remembered choice comes first, by the written city’s key, and only for a city of the list', () => {
    const remembered = new Map([[cityKey('Fes Medina'), '3']]);
    expect(matchCity('FES MÉDINA', CARRIER, remembered)).to.deep.equal({ matched: true, city: CARRIER[2], by: 'remembered' });
    // A remembered choice outranks the exact match too: the shop said where "Dcheira" goes.
    expect(matchCity('Dcheira', CARRIER, new Map([[cityKey('Dcheira'), '33']]))).to.deep.include({ matched: true, by: 'remembered' });
    // A choice whose city left the carrier's list is not followed: the usual steps decide.
    expect(matchCity('Fes Medina', CARRIER, new Map([[cityKey('Fes Medina'), 'gone']]))).to.deep.equal({ matched: false, candidates: [] });
  });

  it('the built-in table: at least 60 cities, each in Latin and Arabic, no spelling given to two cities', () => {
    expect(MOROCCAN_CITIES.length).to.be.at.least(60);
    for (const spellings of MOROCCAN_CITIES) {
      expect(
        spellings.some((s) => /^[\p{Script=Latin}\s'’-]+$/u.test(s)),
        spellings[0],
      ).to.equal(true);
      expect(
        spellings.some((s) => /\p{Script=Arabic}/u.test(s)),
        spellings[0],
      ).to.equal(true);
    }
    const owners = new Map<string, string[]>();
    for (const spellings of MOROCCAN_CITIES)
      for (const spelling of spellings) owners.set(cityKey(spelling), [...(owners.get(cityKey(spelling)) ?? []), spellings[0]]);
    const shared = [...owners].filter(([, cities]) => new Set(cities).size > 1);
    expect(shared).to.deep.equal([]);
    expect(knownCity('الدار البيضاء')).to.equal(knownCity('casa'));
  });

  it('the key forgives case, accents, hyphens, apostrophes, spaces and Arabic letter forms, nothing else', () => {
    expect(cityKey(' Fès ')).to.equal(cityKey('FES'));
    expect(cityKey('Aït-Melloul')).to.equal(cityKey('ait melloul'));
    expect(cityKey('M’diq')).to.equal(cityKey("m'diq"));
    expect(cityKey('M’diq')).to.equal(cityKey('Mdiq'));
    expect(cityKey('طنجة')).to.equal(cityKey('طنجه'));
    expect(cityKey('أكادير')).to.equal(cityKey('اكادير'));
    expect(cityKey('فـــاس')).to.equal(cityKey('فاس'));
    expect(cityKey('Fass')).to.not.equal(cityKey('Fes'));
  });
});
