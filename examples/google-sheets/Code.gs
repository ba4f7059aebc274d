/**
 * Sends each new row of this sheet to Order Confirmation Service as an order, once.
 *
 * Set the two script properties (Project Settings → Script properties): INTAKE_URL (the
 * connection's intake URL) and SIGNING_KEY (the key shown once when the connection was added,
 * `whsec_…`). Then add a time-driven trigger on sendNewRows (Triggers → Add Trigger → every minute).
 *
 * Columns, from A: Order id, Client name, Phone, Products, Address, Total, Sent. A row is sent when
 * it has an order id and "Sent" is empty; the answer's result is written into "Sent". A retried row
 * keeps its order id, so it can never make a second order.
 */
var COLUMNS = { id: 0, name: 1, phone: 2, products: 3, address: 4, total: 5, sent: 6 };

function sendNewRows() {
  var props = PropertiesService.getScriptProperties();
  var url = props.getProperty('INTAKE_URL');
  var key = props.getProperty('SIGNING_KEY');
  var sheet = SpreadsheetApp.getActiveSheet();
  var rows = sheet.getDataRange().getValues();
  for (var r = 1; r < rows.length; r++) {
    var row = rows[r];
    if (!row[COLUMNS.id] || row[COLUMNS.sent]) continue;
    var answer = sendOrder(url, key, orderOfRow(row));
    sheet.getRange(r + 1, COLUMNS.sent + 1).setValue(answer);
  }
}

function orderOfRow(row) {
  return {
    external_id: String(row[COLUMNS.id]),
    client_name: String(row[COLUMNS.name]),
    phone: String(row[COLUMNS.phone]),
    products_name: String(row[COLUMNS.products]),
    address: row[COLUMNS.address] ? String(row[COLUMNS.address]) : null,
    total_amount: row[COLUMNS.total] === '' ? null : String(row[COLUMNS.total])
  };
}

/** Posts one order, signed as Standard Webhooks sign: HMAC-SHA256 of "id.timestamp.body". */
function sendOrder(url, key, order) {
  var body = JSON.stringify({ type: 'order.created', data: order });
  var headers = signedHeaders(key, 'msg_' + Utilities.getUuid().replace(/-/g, ''), Math.floor(Date.now() / 1000), body);
  var response = UrlFetchApp.fetch(url, {
    method: 'post',
    contentType: 'application/json',
    headers: headers,
    payload: body,
    muteHttpExceptions: true
  });
  var code = response.getResponseCode();
  return code === 200 ? JSON.parse(response.getContentText()).result : 'error ' + code;
}

function signedHeaders(key, id, timestamp, body) {
  var secret = Utilities.base64Decode(key.replace(/^whsec_/, ''));
  var signed = Utilities.newBlob(id + '.' + timestamp + '.' + body).getBytes();
  var signature = Utilities.computeHmacSha256Signature(signed, secret);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': 'v1,' + Utilities.base64Encode(signature)
  };
}
