<?xml version="1.0" encoding="UTF-8"?>
<tileset version="1.8" tiledversion="1.8.2" name="tacgrid hex flat (m)" tilewidth="36" tileheight="32" tilecount="15" columns="5">
 <image source="terrain_hex_flat.png" width="180" height="96"/>
 <tile id="0" type="open">
  <properties>
   <property name="move" propertytype="move" value="walk"/>
  </properties>
 </tile>
 <tile id="1" type="floor">
  <properties>
   <property name="move" propertytype="move" value="walk"/>
  </properties>
 </tile>
 <tile id="2" type="rough">
  <properties>
   <property name="cost" type="float" value="2"/>
   <property name="move" propertytype="move" value="walk"/>
  </properties>
 </tile>
 <tile id="3" type="rubble">
  <properties>
   <property name="cost" type="float" value="2"/>
   <property name="difficulty" propertytype="difficulty" value="easy"/>
   <property name="move" propertytype="move" value="walk"/>
  </properties>
 </tile>
 <tile id="4" type="forest">
  <properties>
   <property name="cost" type="float" value="2"/>
   <property name="move" propertytype="move" value="walk"/>
  </properties>
 </tile>
 <tile id="5" type="shallow water">
  <properties>
   <property name="difficulty" propertytype="difficulty" value="none"/>
   <property name="fall" propertytype="fall" value="water"/>
   <property name="move" propertytype="move" value="swim"/>
  </properties>
 </tile>
 <tile id="6" type="deep water">
  <properties>
   <property name="difficulty" propertytype="difficulty" value="moderate"/>
   <property name="fall" propertytype="fall" value="water"/>
   <property name="move" propertytype="move" value="swim"/>
  </properties>
 </tile>
 <tile id="7" type="rapids">
  <properties>
   <property name="difficulty" propertytype="difficulty" value="difficult"/>
   <property name="fall" propertytype="fall" value="water"/>
   <property name="move" propertytype="move" value="swim"/>
  </properties>
 </tile>
 <tile id="8" type="ladder">
  <properties>
   <property name="height" type="float" value="2"/>
   <property name="move" propertytype="move" value="ladder"/>
  </properties>
 </tile>
 <tile id="9" type="cliff">
  <properties>
   <property name="difficulty" propertytype="difficulty" value="difficult"/>
   <property name="height" type="float" value="4"/>
   <property name="move" propertytype="move" value="climb"/>
  </properties>
 </tile>
 <tile id="10" type="wall">
  <properties>
   <property name="height" type="float" value="3"/>
   <property name="move" propertytype="move" value="blocked"/>
  </properties>
 </tile>
 <tile id="11" type="pit">
  <properties>
   <property name="height" type="float" value="3"/>
   <property name="move" propertytype="move" value="gap"/>
  </properties>
 </tile>
 <tile id="12" type="open air">
  <properties>
   <property name="move" propertytype="move" value="air"/>
  </properties>
 </tile>
 <tile id="13" type="crawlspace">
  <properties>
   <property name="move" propertytype="move" value="crawl"/>
  </properties>
 </tile>
 <tile id="14" type="difficult ground">
  <properties>
   <property name="cost_add" type="float" value="1"/>
   <property name="move" propertytype="move" value="walk"/>
  </properties>
 </tile>
</tileset>
