import xml.etree.ElementTree as ET  # expect: B405
import xml.sax  # expect: B406
import xmlrpc.client  # expect: B411
from xml.dom import minidom  # expect: B408
from xml.dom import pulldom  # expect: B409

from lxml import etree  # expect: B410

tree = ET.parse("input.xml")  # expect: B314
root = ET.fromstring(data)  # expect: B314
xml.sax.parseString(data, handler)  # expect: B317
document = minidom.parseString(data)  # expect: B318
events = pulldom.parse("input.xml")  # expect: B319
parsed = etree.fromstring(data)  # expect: B320
